#ifndef C_TAKSI_HEAP_H
#define C_TAKSI_HEAP_H

#include <stddef.h>

/// Bytes the C heap has handed out and not taken back (glibc's mallinfo2: chunks in use in every
/// arena plus mmapped blocks); 0 where the C library cannot say.
size_t taksi_heap_bytes_in_use(void);

#endif
