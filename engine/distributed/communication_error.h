// A collective failed: a peer died, the network broke, or a peer did not answer within the
// timeout. Not a per-method failure: every rank must stop, so the runner never catches it.
// Torch-free, for front ends.
#pragma once
#include <stdexcept>

namespace liftlab {

class CommunicationError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace liftlab
