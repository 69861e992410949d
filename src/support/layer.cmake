# Extra dependencies of kiln_support: OpenSSL's libcrypto for SHA-256 (the CPU's SHA instructions).
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
target_link_libraries(kiln_${name} PUBLIC OpenSSL::Crypto)
