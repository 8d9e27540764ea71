// Whether this test binary runs under AddressSanitizer or ThreadSanitizer; the programs
// of its build folder (build_dir()) are built the same way. Such a build runs the
// library's code several times slower and reserves terabytes of address space, so a few
// tests size their work to it or leave out what the plain build's run already covers.
#pragma once

namespace nl::test {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizerBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitizerBuild = true;
#else
inline constexpr bool kSanitizerBuild = false;
#endif
#else
inline constexpr bool kSanitizerBuild = false;
#endif

}  // namespace nl::test
