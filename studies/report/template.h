// The reports' templates: a markdown file kept beside each study (the prose, the
// paper's numbers, the claims) with places for the values the study computed. A small
// subset of mustache:
//   {{name}}            the value of `name` (a dotted path a.b.c looks inside objects;
//                       `.` is the current element of a section); strings as they
//                       are, numbers in their shortest form
//   {{#name}}..{{/name}} an array: the inside once per element, the element first in
//                       the lookup; true or a non-empty string or object: once; false,
//                       null, 0, "" or []: not at all
//   {{^name}}..{{/name}} the inside only when `name` is false, null, 0, "" or []
//   {{! comment }}      nothing
// A name the values do not hold is an error naming it and its line, so a report can
// never show a blank where a number was meant to be.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace nl {

// `name` says which template it is, for the messages.
std::string render_template(const std::string& text, const nlohmann::json& values, const std::string& name);

}  // namespace nl
