a = 1
b = bytearray(50 * 1024**3)
