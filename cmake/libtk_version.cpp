// libtk needs at least one source of its own; this one names the version.
#include "tk/Version.h"

namespace tk {
const char *versionString() { return TK_VERSION_STRING; }
} // namespace tk
