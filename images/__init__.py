"""The image build system: render, tag, build and publish the images of matrix.yaml."""
