// Precompiled header for every target that compiles LibTorch code: parsing torch/torch.h once
// instead of per translation unit is most of a clean build's time.
#pragma once
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>
