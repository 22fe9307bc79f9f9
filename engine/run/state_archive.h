// The saved state of a run unit for `liftlab-cli run --resume` (training/resume.h): named tensors,
// integers, texts and random-engine states in one file of our own format, so that reading a
// damaged or hostile file can only end in a DataError (no LibTorch deserialiser is involved):
//
//   LIFTLAB-STATE 1\n<length of the JSON index>\n<JSON index>\n<raw tensor bytes>
//
// The index maps each key to {"int": n} | {"text": "…"} | {"tensor": dtype, "shape": […],
// "offset": byte offset into the raw part, "bytes": n}. Tensors are float32, float64, int64 or
// uint8, little-endian, contiguous. Reals are 0-dim float64 tensors (exact, NaN and ±∞ too).
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

namespace liftlab {

class StateArchive {
public:
    void put(const std::string& key, const torch::Tensor& t);  // a detached CPU copy
    void put_tensors(const std::string& key, const std::vector<torch::Tensor>& ts);
    void put_int(const std::string& key, int64_t v);
    void put_real(const std::string& key, double v);
    void put_text(const std::string& key, const std::string& v);
    void put_rng(const std::string& key, const std::mt19937_64& rng);

    bool has(const std::string& key) const { return index_.contains(key); }
    // Each getter throws DataError(where, 0, "state key '…' is missing / not a …").
    torch::Tensor tensor(const std::string& key) const;
    std::vector<torch::Tensor> tensors(const std::string& key) const;
    int64_t integer(const std::string& key) const;
    double real(const std::string& key) const;
    std::string text(const std::string& key) const;
    void rng(const std::string& key, std::mt19937_64& out) const;
    // Copies the saved tensors `key` into `into` in place (no autograd), checking count, shapes
    // and dtypes: the trainers restore their own parameters this way.
    void copy_into(const std::string& key, const std::vector<torch::Tensor>& into) const;

    std::string serialize() const;
    // Parses bytes written by serialize(); `where` names the file in errors. Throws DataError for
    // anything else (bad magic, truncation, offsets outside the data, unknown dtypes, sizes that
    // do not match the shape).
    static StateArchive parse(const std::string& bytes, const std::string& where);
    static StateArchive read_file(const std::string& path);

private:
    [[noreturn]] void missing(const std::string& key, const char* what) const;
    nlohmann::json index_ = nlohmann::json::object();
    std::map<std::string, torch::Tensor> tensors_;
    std::string where_ = "state";
};

}  // namespace liftlab
