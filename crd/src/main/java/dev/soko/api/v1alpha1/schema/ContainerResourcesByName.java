package dev.soko.api.v1alpha1.schema;

import java.util.HashMap;

/** The schema of a map from container name to that container's resources. */
public class ContainerResourcesByName extends HashMap<String, ContainerResources> {}
