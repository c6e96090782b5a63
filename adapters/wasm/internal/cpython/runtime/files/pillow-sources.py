# pillow-sources.py SETUP_PY: the C sources of PIL._imaging, from the lists
# _IMAGING and _LIB_IMAGING of Pillow's setup.py, read without running it.
import ast, sys
t = ast.parse(open(sys.argv[1]).read())
v = {n.targets[0].id: ast.literal_eval(n.value) for n in t.body
     if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name) and n.targets[0].id in ("_IMAGING", "_LIB_IMAGING")}
print("src/_imaging.c", *("src/%s.c" % x for x in v["_IMAGING"]), *("src/libImaging/%s.c" % x for x in v["_LIB_IMAGING"]))
