#ifndef C_TAKSI_HEAP_H
#define C_TAKSI_HEAP_H

#include <stddef.h>

/// Bytes the C heap has handed out and not taken back (glibc's mallinfo2: chunks in use in every
/// arena plus mmapped blocks); 0 where the C library cannot say.
size_t taksi_heap_bytes_in_use(void);

/// Gives the pages of free memory in every arena back to the system (glibc's malloc_trim(0)):
/// glibc returns only the free space at the top of the main heap on its own, so a large
/// structure freed in the middle of an arena (or in a thread's arena) stays resident. 1 when
/// memory was released, 0 when none was or the C library cannot.
int taksi_heap_release_free(void);

#endif
