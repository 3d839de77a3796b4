// The library's audits of its selection mechanisms (audit.hpp). Being written (issue 6).
#include <vector>

#include "dpselect/audit.hpp"

namespace dpselect::audit {

std::vector<AuditTarget> selection_audits() { return {}; }

}  // namespace dpselect::audit
