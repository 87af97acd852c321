package dev.pubsubworker.spring.boot;

import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.util.ClassUtils;

/** The {@code poison-exceptions} setting of a subscription: exception classes by name. */
final class PoisonExceptions {

  private PoisonExceptions() {}

  /** What is wrong with {@code name} as a poison exception, or null if nothing is. */
  static @Nullable String problem(String name) {
    try {
      load(name, ClassUtils.getDefaultClassLoader());
      return null;
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
  }

  /**
   * The classes {@code names} name, loaded through {@code loader}.
   *
   * @throws IllegalArgumentException for a name that is no loadable {@link Throwable} class
   */
  static List<Class<? extends Throwable>> load(List<String> names, @Nullable ClassLoader loader) {
    List<Class<? extends Throwable>> classes = new ArrayList<>();
    for (String name : names) {
      classes.add(load(name, loader));
    }
    return classes;
  }

  private static Class<? extends Throwable> load(String name, @Nullable ClassLoader loader) {
    Class<?> c;
    try {
      c = ClassUtils.forName(name.strip(), loader);
    } catch (ClassNotFoundException | LinkageError e) {
      throw new IllegalArgumentException("no class " + name + " on the class path", e);
    }
    if (!Throwable.class.isAssignableFrom(c)) {
      throw new IllegalArgumentException(name + " is not an exception class");
    }
    return c.asSubclass(Throwable.class);
  }
}
