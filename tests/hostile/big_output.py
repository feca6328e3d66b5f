chunk = "x" * (1 << 20)
for i in range(100):
    print(chunk)
done = True
