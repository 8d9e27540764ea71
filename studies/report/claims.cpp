#include "studies/report/claims.h"

#include <algorithm>
#include <iterator>

#include "tensor/error.h"

namespace nl {

const char* const kClaimStatuses[4] = {"reproduced", "not reproduced", "artefact", "untestable here"};

nlohmann::json claim_row(const std::string& claim, const std::string& paper, const std::string& here,
                         const std::string& status, const std::string& detail, const std::string& why) {
  NL_CHECK(std::find(std::begin(kClaimStatuses), std::end(kClaimStatuses), status) != std::end(kClaimStatuses),
           "claim_row: unknown status '", status, "' for the claim '", claim, "'");
  return {{"claim", claim}, {"paper", paper}, {"here", here}, {"status", status}, {"why", why}, {"detail", detail}};
}

}  // namespace nl
