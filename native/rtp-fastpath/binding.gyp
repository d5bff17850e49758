{
  "targets": [
    {
      "target_name": "rtp_fastpath",
      "sources": ["src/fastpath.c", "src/packet.c"],
      "cflags": ["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", "-fvisibility=hidden"],
      "cflags!": ["-Wno-unused-parameter"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
