"""The readers' safety layers: limits on input sizes and numbers, a pre-scan that proves a pickle
holds only plain data, a restricted unpickler that builds nothing else, and zip reading for
`.pt2` archives."""
