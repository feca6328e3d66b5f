# breakpoints: 9, 13
log = []
for token in ["7", "", "x", "9"]:
    try:
        try:
            n = int(token)
        except ValueError:
            if not token:
                raise
            n = 0
        log.append(n)
    except ValueError:
        log.append(None)
    finally:
        log.append("|")
print(log)
