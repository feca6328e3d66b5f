# parity program: stepping off the end of the module, and into a call on its last line
# breakpoints: 9
# script: stepIn next next next next
def last(n):
    return n + 1


a = 1
b = last(a)
print(b)
