#include "run/state_archive.h"

#include <cstring>
#include <limits>
#include <sstream>

#include "core/bounded_input.h"
#include "core/errors.h"

namespace liftlab {

namespace {

constexpr const char* kMagic = "LIFTLAB-STATE 1\n";
constexpr std::uint64_t kMaxStateBytes = std::uint64_t{4} << 30;  // a big model's Adam state
constexpr int64_t kMaxStateTensorDims = 8;

const char* dtype_name(torch::ScalarType t) {
    switch (t) {
        case torch::kFloat32:
            return "float32";
        case torch::kFloat64:
            return "float64";
        case torch::kInt64:
            return "int64";
        case torch::kUInt8:
            return "uint8";
        default:
            return nullptr;
    }
}

bool dtype_of(const std::string& name, torch::ScalarType* out) {
    for (auto t : {torch::kFloat32, torch::kFloat64, torch::kInt64, torch::kUInt8})
        if (name == dtype_name(t)) {
            *out = t;
            return true;
        }
    return false;
}

}  // namespace

void StateArchive::put(const std::string& key, const torch::Tensor& t) {
    auto c = t.detach().to(torch::kCPU).contiguous().clone();
    if (!dtype_name(c.scalar_type()))
        throw std::invalid_argument("state key '" + key + "': unsupported dtype");
    tensors_[key] = c;
    index_[key] = {{"tensor", dtype_name(c.scalar_type())}, {"shape", c.sizes().vec()}};
}

void StateArchive::put_tensors(const std::string& key, const std::vector<torch::Tensor>& ts) {
    put_int(key + "#count", static_cast<int64_t>(ts.size()));
    for (size_t i = 0; i < ts.size(); ++i) put(key + "#" + std::to_string(i), ts[i]);
}

void StateArchive::put_int(const std::string& key, int64_t v) {
    index_[key] = {{"int", v}};
}

void StateArchive::put_real(const std::string& key, double v) {
    put(key, torch::full({}, v, torch::kFloat64));
}

void StateArchive::put_text(const std::string& key, const std::string& v) {
    index_[key] = {{"text", v}};
}

void StateArchive::put_rng(const std::string& key, const std::mt19937_64& rng) {
    std::ostringstream s;
    s << rng;
    put_text(key, s.str());
}

void StateArchive::missing(const std::string& key, const char* what) const {
    throw DataError(where_, 0, "state key '" + key + "' is missing or not " + what);
}

torch::Tensor StateArchive::tensor(const std::string& key) const {
    const auto it = tensors_.find(key);
    if (it == tensors_.end()) missing(key, "a tensor");
    return it->second;
}

std::vector<torch::Tensor> StateArchive::tensors(const std::string& key) const {
    const int64_t n = integer(key + "#count");
    if (n < 0 || n > 1000000) missing(key + "#count", "a tensor count");
    std::vector<torch::Tensor> out;
    for (int64_t i = 0; i < n; ++i) out.push_back(tensor(key + "#" + std::to_string(i)));
    return out;
}

int64_t StateArchive::integer(const std::string& key) const {
    if (!index_.contains(key) || !index_[key].is_object() || !index_[key].contains("int") ||
        !index_[key]["int"].is_number_integer())
        missing(key, "an integer");
    return index_[key]["int"].get<int64_t>();
}

double StateArchive::real(const std::string& key) const {
    const auto t = tensor(key);
    if (t.scalar_type() != torch::kFloat64 || t.numel() != 1) missing(key, "a real");
    return t.item<double>();
}

std::string StateArchive::text(const std::string& key) const {
    if (!index_.contains(key) || !index_[key].is_object() || !index_[key].contains("text") ||
        !index_[key]["text"].is_string())
        missing(key, "a text");
    return index_[key]["text"].get<std::string>();
}

void StateArchive::rng(const std::string& key, std::mt19937_64& out) const {
    std::istringstream s(text(key));
    std::mt19937_64 r;
    s >> r;
    if (s.fail()) missing(key, "a random engine state");
    out = r;
}

void StateArchive::copy_into(const std::string& key, const std::vector<torch::Tensor>& into) const {
    const auto saved = tensors(key);
    if (saved.size() != into.size())
        throw DataError(where_, 0,
                        "state key '" + key + "' holds " + std::to_string(saved.size()) +
                            " tensors; this run has " + std::to_string(into.size()));
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < into.size(); ++i) {
        if (saved[i].sizes() != into[i].sizes() || saved[i].scalar_type() != into[i].scalar_type())
            throw DataError(where_, 0,
                            "state key '" + key + "#" + std::to_string(i) +
                                "' does not match this run's tensor (shape or type)");
        into[i].copy_(saved[i]);
    }
}

std::string StateArchive::serialize() const {
    nlohmann::json index = index_;
    size_t raw_size = 0;
    for (const auto& [key, t] : tensors_) {
        const auto bytes = static_cast<size_t>(t.numel()) * t.element_size();
        index[key]["offset"] = raw_size;
        index[key]["bytes"] = bytes;
        raw_size += bytes;
    }
    const std::string head = index.dump();
    std::string out = std::string(kMagic) + std::to_string(head.size()) + "\n" + head + "\n";
    out.reserve(out.size() + raw_size);  // one copy of the tensors' bytes
    for (const auto& [key, t] : tensors_)
        out.append(static_cast<const char*>(t.data_ptr()),
                   static_cast<size_t>(t.numel()) * t.element_size());
    return out;
}

StateArchive StateArchive::parse(const std::string& bytes, const std::string& where) {
    auto bad = [&](const std::string& what) { throw DataError(where, 0, what); };
    const size_t magic = std::strlen(kMagic);
    if (bytes.compare(0, magic, kMagic) != 0) bad("not a LiftLab state file (bad header)");
    const size_t eol = bytes.find('\n', magic);
    if (eol == std::string::npos || eol - magic > 19) bad("truncated header");
    uint64_t head_len = 0;
    for (size_t i = magic; i < eol; ++i) {
        if (bytes[i] < '0' || bytes[i] > '9') bad("bad index length");
        head_len = head_len * 10 + static_cast<uint64_t>(bytes[i] - '0');
    }
    if (head_len > bytes.size() - eol - 1 || bytes.size() - eol - 1 - head_len < 1 ||
        bytes[eol + 1 + head_len] != '\n')
        bad("truncated index");
    StateArchive a;
    a.where_ = where;
    a.index_ = parse_json_bounded(bytes.substr(eol + 1, head_len), where);
    if (!a.index_.is_object()) bad("the index is not a JSON object");
    const size_t raw_start = eol + 1 + head_len + 1;
    const uint64_t raw_size = bytes.size() - raw_start;
    for (auto& [key, entry] : a.index_.items()) {
        if (!entry.is_object()) bad("state key '" + key + "': not an object");
        if (!entry.contains("tensor")) continue;
        torch::ScalarType dtype;
        if (!entry["tensor"].is_string() || !dtype_of(entry["tensor"].get<std::string>(), &dtype))
            bad("state key '" + key + "': unknown tensor type");
        const auto& shape = entry.value("shape", nlohmann::json());
        if (!shape.is_array() || static_cast<int64_t>(shape.size()) > kMaxStateTensorDims)
            bad("state key '" + key + "': bad shape");
        std::vector<int64_t> sizes;
        uint64_t numel = 1;
        for (const auto& s : shape) {
            if (!s.is_number_unsigned()) bad("state key '" + key + "': bad shape");
            const uint64_t v = s.get<uint64_t>();
            if (v > raw_size || (v > 0 && numel > raw_size / v))
                bad("state key '" + key + "': shape larger than the file");
            numel *= v;
            sizes.push_back(static_cast<int64_t>(v));
        }
        const auto& off = entry.value("offset", nlohmann::json());
        const auto& len = entry.value("bytes", nlohmann::json());
        if (!off.is_number_unsigned() || !len.is_number_unsigned())
            bad("state key '" + key + "': bad offset or size");
        const uint64_t offset = off.get<uint64_t>(), nbytes = len.get<uint64_t>();
        const uint64_t element = static_cast<uint64_t>(c10::elementSize(dtype));
        if (nbytes != numel * element || offset > raw_size || nbytes > raw_size - offset)
            bad("state key '" + key + "': data outside the file or of the wrong size");
        auto t = torch::empty(sizes, torch::TensorOptions().dtype(dtype));
        if (nbytes > 0) std::memcpy(t.data_ptr(), bytes.data() + raw_start + offset, nbytes);
        a.tensors_[key] = t;
    }
    return a;
}

StateArchive StateArchive::read_file(const std::string& path) {
    return parse(read_regular_file(path, kMaxStateBytes), path);
}

}  // namespace liftlab
