"""Giving buffers offsets: the numba kernels, greedy first and best fit, the traced placement the
replay shows, exact search and the randomised search built on them."""
