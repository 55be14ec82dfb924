module oam-operator.dev/bench/peer/protocol

go 1.26.8
