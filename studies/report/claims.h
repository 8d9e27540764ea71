// One claim of a paper as a study judges it: a row of the "what reproduces" table
// (studies/reproduces/reproduces.h), written by the study that measured it from its own
// results file, so that the table and the study's page say the same thing.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace nl {

// The statuses a row may have. reproduced: the paper's claim holds in every seed;
// not reproduced: it does not, or the seeds disagree; artefact: the paper's sign only at
// the end of a run whose LN baseline over-fits (at each model's own best step it goes the
// other way); untestable here: nothing here can judge it (why says what is missing).
extern const char* const kClaimStatuses[4];

// {claim, paper, here, status, why, detail}; why: for an untestable claim, the reason in
// a few words ("" otherwise); detail: the study's own verdict sentence. Throws when the
// status is none of kClaimStatuses.
nlohmann::json claim_row(const std::string& claim, const std::string& paper, const std::string& here,
                         const std::string& status, const std::string& detail, const std::string& why = "");

}  // namespace nl
