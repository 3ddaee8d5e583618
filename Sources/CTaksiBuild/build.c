#include "CTaksiBuild.h"

// Made a string here, so the flag needs no quotes to pass through the shell and SwiftPM.
#define TAKSI_STRING(value) #value
#define TAKSI_EXPANDED_STRING(value) TAKSI_STRING(value)

const char *taksi_source_commit(void) {
#ifdef TAKSI_SOURCE_COMMIT
    return TAKSI_EXPANDED_STRING(TAKSI_SOURCE_COMMIT);
#else
    return "";
#endif
}
