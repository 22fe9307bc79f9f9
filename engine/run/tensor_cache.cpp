#include "run/tensor_cache.h"

#include <filesystem>
#include <random>

namespace liftlab {

std::uint64_t fnv1a64(const std::string& text) {
    std::uint64_t h = 14695981039346656037ULL;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    return h;
}

std::optional<std::vector<torch::Tensor>> load_keyed_tensors(const std::string& path,
                                                             const std::string& key, size_t count) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
    try {
        std::vector<torch::Tensor> t;
        torch::load(t, path);
        if (t.size() != count + 1 || t[0].scalar_type() != torch::kUInt8 || t[0].dim() != 1)
            return std::nullopt;
        const std::string stored(reinterpret_cast<const char*>(t[0].data_ptr<uint8_t>()),
                                 static_cast<size_t>(t[0].numel()));
        if (stored != key) return std::nullopt;  // a hash collision or a stale format
        return std::vector<torch::Tensor>(t.begin() + 1, t.end());
    } catch (const std::exception&) {
        return std::nullopt;  // truncated or not a tensor archive
    }
}

void store_keyed_tensors(const std::string& path, const std::string& key,
                         const std::vector<torch::Tensor>& tensors) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    const std::string tmp = path + ".tmp-" + std::to_string(std::random_device{}());
    try {
        auto key_tensor = torch::empty({static_cast<int64_t>(key.size())}, torch::kUInt8);
        std::copy(key.begin(), key.end(), key_tensor.data_ptr<uint8_t>());
        std::vector<torch::Tensor> all = {key_tensor};
        all.insert(all.end(), tensors.begin(), tensors.end());
        torch::save(all, tmp);
        fs::rename(tmp, path);
    } catch (const std::exception&) {
        fs::remove(tmp, ec);  // best effort
    }
}

}  // namespace liftlab
