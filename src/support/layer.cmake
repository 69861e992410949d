# Extra dependencies of kiln_support: OpenSSL's libcrypto for SHA-256 (the CPU's SHA instructions).
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
target_link_libraries(kiln_${name} PUBLIC OpenSSL::Crypto)
# The version and git revision (cmake/KilnVersion.cmake generates the file at configure time).
target_sources(kiln_${name} PRIVATE ${PROJECT_BINARY_DIR}/generated/version.cpp)
