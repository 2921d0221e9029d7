#ifndef BGSIM_SHA256_BLOCKS_H
#define BGSIM_SHA256_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

/// SHA-256's 64 round constants K0...K63 (FIPS 180-4, 4.2.2).
const uint32_t *bgsim_sha256_round_constants(void);

/// Whether this processor has the SHA extensions (and SSSE3 and SSE4.1, which the code
/// below also uses): x86-64 only; 0 elsewhere.
int bgsim_sha256_hardware_available(void);

/// SHA-256's compression function (FIPS 180-4, 6.2.2) over `blocks` 64-byte blocks of
/// `data`, updating `state` (the eight hash words, H0 first). Call only when
/// `bgsim_sha256_hardware_available()` is 1.
void bgsim_sha256_hardware_blocks(uint32_t state[8], const uint8_t *data, size_t blocks);

#endif
