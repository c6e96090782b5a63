# wheel-extract.py WHEEL DIR: the wheel's files into DIR, as pip would
# install them, less RECORD and its test packages.
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
z.extractall(sys.argv[2], [n for n in z.namelist()
               if not n.endswith(".dist-info/RECORD") and "tests" not in n.split("/")[:-1]])
