// A probe for the tests of what models and blocks report (nn/probe.h).
#pragma once
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <utility>

#include "nn/probe.h"
#include "tensor/tensor.h"

namespace nl::test {

// Keeps a copy of every tensor a probed forward reports, by (layer, site).
struct Capture : ActivationProbe {
  std::map<std::pair<int64_t, std::string>, Tensor> seen;
  void record(int64_t layer, const std::string& site, const Tensor& value) override {
    seen[{layer, site}] = value.clone();
  }
  const Tensor& at(int64_t layer, const std::string& site) const {
    auto it = seen.find({layer, site});
    INFO("site " << site << " of layer " << layer);
    REQUIRE(it != seen.end());
    return it->second;
  }
};

}  // namespace nl::test
