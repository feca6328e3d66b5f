import os
env = sorted(os.environ)
