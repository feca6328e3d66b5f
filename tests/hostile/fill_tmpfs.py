import os
for i in range(1000):
    with open(f"fill{i}.bin", "wb") as fh:
        fh.write(b"x" * (8 << 20))
