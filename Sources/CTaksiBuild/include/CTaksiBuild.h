#ifndef C_TAKSI_BUILD_H
#define C_TAKSI_BUILD_H

/// The git commit this binary was built from, as scripts/install.sh and scripts/release.sh pass it
/// (`-Xcc -DTAKSI_SOURCE_COMMIT=<40 hex digits>`, from a clone with no uncommitted change); ""
/// for any other build (`swift run`, a source without git, a clone with changes).
const char *taksi_source_commit(void);

#endif
