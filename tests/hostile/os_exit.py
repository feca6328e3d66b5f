import os
x = 1
os._exit(3)
