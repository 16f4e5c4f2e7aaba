"""The Kafka wire protocol: primitive codec, schema engine, headers and the generated API messages.

Pure: no I/O. ``protocol/apis/`` holds one typed module per Kafka API, generated from
``protocol/definitions/``; ``codec.py`` reads and writes the primitive types.
"""
