#include "run/tensor_cache.h"

#include <filesystem>

#include "run/run_store.h"
#include "run/state_archive.h"

namespace liftlab {

namespace {
constexpr const char* kCacheKeyEntry = "cache_key";
constexpr const char* kCacheTensorsEntry = "cache_tensors";
}  // namespace

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
        const StateArchive archive = StateArchive::read_file(path);
        if (!archive.has(kCacheKeyEntry) || archive.text(kCacheKeyEntry) != key)
            return std::nullopt;  // a hash collision or a stale format
        auto tensors = archive.tensors(kCacheTensorsEntry);
        if (tensors.size() != count) return std::nullopt;
        return tensors;
    } catch (const std::exception&) {
        return std::nullopt;  // damaged, truncated, or not a state archive (an old torch::save)
    }
}

void store_keyed_tensors(const std::string& path, const std::string& key,
                         const std::vector<torch::Tensor>& tensors) {
    try {
        std::error_code ec;
        std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
        StateArchive archive;
        archive.put_text(kCacheKeyEntry, key);
        archive.put_tensors(kCacheTensorsEntry, tensors);
        // Not durable: a cache lost in a power cut is regenerated; the rename keeps it whole.
        write_file_atomic(path, archive.serialize(), /*durable=*/false);
    } catch (const std::exception&) {
        // best effort: write_file_atomic leaves no partial file
    }
}

}  // namespace liftlab
