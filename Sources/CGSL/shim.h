// Bridge to the GNU Scientific Library.
//
// GSL exposes its generator types as C globals (`gsl_rng_mt19937`, ...). Swift 6 refuses to
// read such globals from Swift because they are shared mutable state, so each one is returned
// from a small `static inline` function instead. The function form also keeps the set of
// generators bgsim offers explicit.
#ifndef BGSIM_CGSL_SHIM_H
#define BGSIM_CGSL_SHIM_H

#include <stdlib.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_sort_double.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_qrng.h>

static inline const gsl_rng_type *bgsim_rng_mt19937(void) { return gsl_rng_mt19937; }
static inline const gsl_rng_type *bgsim_rng_ranlxd2(void) { return gsl_rng_ranlxd2; }
static inline const gsl_rng_type *bgsim_rng_ranlxs2(void) { return gsl_rng_ranlxs2; }
static inline const gsl_rng_type *bgsim_rng_taus2(void) { return gsl_rng_taus2; }
static inline const gsl_rng_type *bgsim_rng_gfsr4(void) { return gsl_rng_gfsr4; }
static inline const gsl_rng_type *bgsim_rng_ranlux389(void) { return gsl_rng_ranlux389; }

static inline const gsl_qrng_type *bgsim_qrng_sobol(void) { return gsl_qrng_sobol; }
static inline const gsl_qrng_type *bgsim_qrng_halton(void) { return gsl_qrng_halton; }

/// A generator of type `T` seeded with `seed`: what `gsl_rng_alloc` then `gsl_rng_set` give
/// (the same zeroed state, seeded once), without `gsl_rng_alloc`'s own seeding with the
/// default seed, which the second call overwrites. A simulation makes dozens of streams, and
/// seeding an mt19937 costs about 5,600 instructions. Freed with `gsl_rng_free`.
static inline gsl_rng *bgsim_rng_alloc_seeded(const gsl_rng_type *T, unsigned long int seed) {
    gsl_rng *r = (gsl_rng *)malloc(sizeof(gsl_rng));
    if (r == NULL) return NULL;
    r->state = calloc(1, T->size);
    if (r->state == NULL) { free(r); return NULL; }
    r->type = T;
    gsl_rng_set(r, seed);
    return r;
}

/// GSL's default error handler calls abort(). bgsim checks arguments before calling GSL and
/// turns the rest into Swift errors, so the handler is switched off once at start-up.
static inline void bgsim_gsl_disable_abort(void) { gsl_set_error_handler_off(); }

#endif
