// The library's audits of its sparse vector mechanisms (audit.hpp). Being written (issue 6).
#include <vector>

#include "dpselect/audit.hpp"

namespace dpselect::audit {

std::vector<AuditTarget> sparse_vector_audits() { return {}; }

}  // namespace dpselect::audit
