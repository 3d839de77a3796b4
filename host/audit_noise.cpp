// The library's audits of its noise mechanisms (audit.hpp). Being written (issue 6).
#include <vector>

#include "dpselect/audit.hpp"

namespace dpselect::audit {

std::vector<AuditTarget> noise_audits() { return {}; }

}  // namespace dpselect::audit
