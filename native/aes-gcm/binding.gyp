{
  "targets": [
    {
      "target_name": "aes_gcm",
      "sources": ["src/aes_gcm.c"],
      "cflags": ["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", "-fvisibility=hidden"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
