// The check of a TorchScript archive's code files (code/__torch__/….py) before LibTorch compiles
// them. No LibTorch here.
#pragma once
#include <string>

namespace liftlab {

// LibTorch 1.13 compiles an unannotated assignment in a class body as a class constant and then
// reads its missing `Final[…]` annotation (a null read, found by fuzzing: a damaged code file
// crashed LiftLab; later PyTorch checks it). PyTorch writes class constants as
// `name : Final[T] = value`, enum members and its metadata lists (`__parameters__ = […]`) as
// plain assignments; any other assignment at the body's own indentation of a class that is not
// an Enum is refused. Returns the problem ("line 4: a class constant 'k' without its Final[…]
// annotation"), or "".
std::string code_problem(const std::string& code);

}  // namespace liftlab
