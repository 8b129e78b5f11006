package dev.soko.operator.harness;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * For a class whose ordered tests build on each other: after the first failure the later tests are
 * skipped, naming the failed one, instead of each timing out on what was never made.
 */
public final class StopAfterFailure implements TestWatcher, ExecutionCondition {
  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(StopAfterFailure.class);

  @Override
  public void testFailed(ExtensionContext context, Throwable cause) {
    classStore(context).put("failed", context.getDisplayName());
  }

  @Override
  public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
    if (context.getTestMethod().isEmpty()) {
      return ConditionEvaluationResult.enabled("a class runs");
    }
    String failed = classStore(context).get("failed", String.class);
    return failed == null
        ? ConditionEvaluationResult.enabled("no earlier test failed")
        : ConditionEvaluationResult.disabled("builds on " + failed + ", which failed");
  }

  private static ExtensionContext.Store classStore(ExtensionContext context) {
    ExtensionContext classContext = context.getParent().orElse(context);
    return classContext.getStore(NAMESPACE);
  }
}
