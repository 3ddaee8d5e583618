#define _GNU_SOURCE
#include "LockCensus.h"

#ifdef __linux__

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>

#define CAPACITY (1u << 20)

struct entry {
    uint64_t thread;
    uint64_t mutex;
};

static struct entry entries[CAPACITY];
static atomic_size_t next_entry;
static _Thread_local int recording;

typedef int (*mutex_function)(pthread_mutex_t *);
static _Atomic(mutex_function) real_lock;
static _Atomic(mutex_function) real_trylock;

static mutex_function resolve(_Atomic(mutex_function) *slot, const char *name) {
    mutex_function found = atomic_load_explicit(slot, memory_order_acquire);
    if (found) return found;
    found = (mutex_function)dlsym(RTLD_NEXT, name);
    atomic_store_explicit(slot, found, memory_order_release);
    return found;
}

static void record(pthread_mutex_t *mutex) {
    if (!recording) return;
    size_t index = atomic_fetch_add_explicit(&next_entry, 1, memory_order_relaxed);
    if (index >= CAPACITY) return;
    entries[index].thread = (uint64_t)pthread_self();
    entries[index].mutex = (uint64_t)(uintptr_t)mutex;
}

int pthread_mutex_lock(pthread_mutex_t *mutex) {
    record(mutex);
    return resolve(&real_lock, "pthread_mutex_lock")(mutex);
}

int pthread_mutex_trylock(pthread_mutex_t *mutex) {
    record(mutex);
    return resolve(&real_trylock, "pthread_mutex_trylock")(mutex);
}

void lock_census_record_this_thread(int on) { recording = on; }

void lock_census_clear(void) { atomic_store(&next_entry, 0); }

size_t lock_census_count(void) {
    size_t count = atomic_load(&next_entry);
    return count < CAPACITY ? count : CAPACITY;
}

void lock_census_entry(size_t index, uint64_t *thread, uint64_t *mutex) {
    *thread = entries[index].thread;
    *mutex = entries[index].mutex;
}

uint64_t lock_census_this_thread(void) { return (uint64_t)pthread_self(); }

#else

void lock_census_record_this_thread(int on) { (void)on; }
void lock_census_clear(void) {}
size_t lock_census_count(void) { return 0; }
void lock_census_entry(size_t index, uint64_t *thread, uint64_t *mutex) { (void)index; *thread = 0; *mutex = 0; }
uint64_t lock_census_this_thread(void) { return 0; }

#endif
