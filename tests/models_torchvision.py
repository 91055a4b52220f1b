"""torchvision's ResNet basic block and DenseNet layer, in the shape of upstream, tiny.

Copied (the lines that matter for in-place writes) from pytorch/vision,
``torchvision/models/resnet.py`` (``BasicBlock``, ``ResNet``) and
``torchvision/models/densenet.py`` (``_DenseLayer``, ``_DenseBlock``; the
``use_reentrant=False`` checkpoint of torchvision 0.16 and later, and the
older reentrant one). Widths are small so that the tests run in seconds.
Each model takes ``bug=True`` to inject one in-place write that breaks
backward, on the line marked ``# W:<name>``.
"""

from __future__ import annotations

import torch
import torch.utils.checkpoint as cp
from torch import Tensor, nn


class BasicBlock(nn.Module):
    """torchvision/models/resnet.py ``BasicBlock``: ``ReLU(inplace=True)`` and ``out += identity``."""

    def __init__(self, inplanes: int, planes: int, stride: int = 1, bug: bool = False) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(
                nn.Conv2d(inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes)
            )
        self.bug = bug

    def forward(self, x: Tensor) -> Tensor:
        identity = x

        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)  # W:resnet_relu

        out = self.conv2(out)
        out = self.bn2(out)

        if self.downsample is not None:
            identity = self.downsample(x)

        if self.bug:
            identity += out  # W:resnet_bug (x itself when there is no downsample: conv1 saved it)
            out = identity
        else:
            out += identity  # W:resnet_add
        out = self.relu(out)  # W:resnet_relu_after_add

        return out


class ResNet18(nn.Module):
    """torchvision/models/resnet.py ``ResNet`` with ``[2, 2, 2, 2]`` basic blocks, narrow."""

    def __init__(self, width: int = 8, num_classes: int = 10, bug: bool = False) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        blocks: list[nn.Module] = []
        inplanes = width
        for n, planes in enumerate([width, 2 * width, 4 * width, 8 * width]):
            stride = 1 if n == 0 else 2
            blocks += [
                BasicBlock(inplanes, planes, stride, bug=bug and n == 0),
                BasicBlock(planes, planes),
            ]
            inplanes = planes
        self.layers = nn.Sequential(*blocks)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(inplanes, num_classes)

    def forward(self, x: Tensor) -> Tensor:
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)  # W:resnet_stem_relu
        x = self.maxpool(x)
        x = self.layers(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.fc(x)


class DenseLayer(nn.Module):
    """torchvision/models/densenet.py ``_DenseLayer``, with its ``memory_efficient`` checkpoint."""

    def __init__(
        self,
        num_input_features: int,
        growth_rate: int,
        bn_size: int,
        memory_efficient: bool,
        reentrant: bool = False,
        bug: bool = False,
    ) -> None:
        super().__init__()
        self.norm1 = nn.BatchNorm2d(num_input_features)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(num_input_features, bn_size * growth_rate, 1, 1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth_rate)
        self.relu2 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(bn_size * growth_rate, growth_rate, 3, 1, 1, bias=False)
        self.memory_efficient = memory_efficient
        self.reentrant = reentrant
        self.bug = bug

    def bn_function(self, inputs: list[Tensor]) -> Tensor:
        concated_features = torch.cat(inputs, 1)
        return self.conv1(self.relu1(self.norm1(concated_features)))  # W:dense_relu1

    def call_checkpoint_bottleneck(self, inputs: list[Tensor]) -> Tensor:
        def closure(*inputs: Tensor) -> Tensor:
            return self.bn_function(list(inputs))

        return cp.checkpoint(closure, *inputs, use_reentrant=self.reentrant)  # type: ignore[no-any-return]

    def forward(self, prev_features: list[Tensor]) -> Tensor:
        if self.memory_efficient and any(t.requires_grad for t in prev_features):
            bottleneck_output = self.call_checkpoint_bottleneck(prev_features)
        else:
            bottleneck_output = self.bn_function(prev_features)
        new_features = self.conv2(self.relu2(self.norm2(bottleneck_output)))  # W:dense_relu2
        if self.bug:
            bottleneck_output.mul_(0.5)  # W:dense_bug (norm2 saved it)
        return new_features


class DenseBlock(nn.Module):
    """torchvision/models/densenet.py ``_DenseBlock``, after a stem conv."""

    def __init__(
        self,
        num_layers: int = 4,
        memory_efficient: bool = False,
        reentrant: bool = False,
        bug: bool = False,
    ) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, 1, 1)
        self.layers = nn.ModuleList(
            DenseLayer(8 + i * 4, 4, 2, memory_efficient, reentrant, bug=bug and i == 1)
            for i in range(num_layers)
        )

    def forward(self, x: Tensor) -> Tensor:
        features = [self.stem(x)]
        for layer in self.layers:
            features.append(layer(features))
        return torch.cat(features, 1)
