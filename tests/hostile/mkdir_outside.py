import os
os.mkdir("/tmp/ndb-hostile-dir")
