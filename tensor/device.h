// Where a tensor's numbers live.
#pragma once
#include <string>

namespace nl {

enum class Device { CPU, CUDA };

inline const char* device_name(Device d) { return d == Device::CPU ? "cpu" : "cuda"; }
// True when this binary was built with CUDA=1 and a GPU answered.
bool cuda_available();
// True when this binary was built with CUDA=1 (a GPU or not).
bool cuda_built();

}  // namespace nl
