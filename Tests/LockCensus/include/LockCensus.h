#ifndef LOCK_CENSUS_H
#define LOCK_CENSUS_H

#include <stddef.h>
#include <stdint.h>

/// Which mutexes a thread acquires, for tests. Linked into the test executable, this module
/// defines `pthread_mutex_lock` (and `pthread_mutex_trylock`) over the C library's, so every lock
/// taken by code built into that executable (the server, SwiftNIO, the metrics libraries) passes
/// through it; a thread that turned the census on records each acquisition (the mutex's
/// address), and nothing else changes. Locks taken inside shared libraries (the Swift runtime,
/// Foundation, Dispatch) are not seen. Linux only (elsewhere it records nothing).

/// Starts (1) or stops (0) recording the calling thread's acquisitions.
void lock_census_record_this_thread(int on);

/// Forgets every acquisition recorded so far.
void lock_census_clear(void);

/// How many acquisitions were recorded (at most the capacity, 1 << 20).
size_t lock_census_count(void);

/// The recorded acquisition `index`: the thread that took it and the mutex.
void lock_census_entry(size_t index, uint64_t *thread, uint64_t *mutex);

/// The calling thread, as entries name it.
uint64_t lock_census_this_thread(void);

#endif
