while True:
    sum(range(10**8))
