# pi by Machin's formula in exact integer arithmetic (independent of BBP), then hex digits.
def arctan_inv(x, one):
    total = term = one // x
    x2 = x * x
    n = 1
    sign = -1
    while term:
        term //= x2
        total += sign * (term // (2 * n + 1))
        sign = -sign
        n += 1
    return total
digits = 10000
guard = 64
bits = 4 * digits + guard
one = 1 << bits
pi = 4 * (4 * arctan_inv(5, one) - arctan_inv(239, one))
frac = pi - (3 << bits)
h = hex(frac >> guard)[2:].upper().rjust(digits, '0')
print(h[:64])
open('digits.txt','w').write(h)
