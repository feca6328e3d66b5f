import time
x = 1
time.sleep(600)
