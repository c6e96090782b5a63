# zip-has.py ZIP NAME...: fails, naming them, unless ZIP holds every NAME
# (what the interpreter imports while starting, a time zone, ...).
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
lack = [n for n in sys.argv[2:] if n not in names]
sys.exit(f"{sys.argv[1]} lacks {lack}" if lack else None)
