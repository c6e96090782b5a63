# Stand-in for meson-python while pip downloads an sdist (build.sh).
import email.parser
import os


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    with open("PKG-INFO", encoding="utf-8") as f:
        text = f.read()
    msg = email.parser.Parser().parsestr(text, headersonly=True)
    name = f"{msg['Name'].replace('-', '_')}-{msg['Version']}.dist-info"
    os.makedirs(os.path.join(metadata_directory, name))
    with open(os.path.join(metadata_directory, name, "METADATA"), "w", encoding="utf-8") as f:
        f.write(text)
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    raise RuntimeError("build.sh only downloads this sdist")
