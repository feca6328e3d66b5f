import os, sqlite3, sys
sqlite3.connect(os.path.join(sys.argv[1], "leak.db")).execute("create table t (x)")
