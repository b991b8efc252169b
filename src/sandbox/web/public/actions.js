/**
 * From a clicked or changed element in the DOM to the `ActionRequest` of sandbox-api.ts: its
 * container (message, ephemeral or view), its block and the element exactly as the bot sent it.
 */
import { isRecord } from './escape.js';
import { actionIdOf, blockIdOf } from './text-object.js';

/** Undefined when the element is no longer in the snapshot (the message changed meanwhile). */
export function findActionTarget(node, snapshot, fallbackChannel) {
  const elementNode = node.closest('[data-ei]');
  const containerNode = elementNode?.closest('[data-container]');
  if (!elementNode || !containerNode) return undefined;
  const found = containerOf(containerNode, snapshot, fallbackChannel);
  if (!found) return undefined;
  const blockIndex = Number(elementNode.getAttribute('data-bi'));
  const elementIndex = elementNode.getAttribute('data-ei');
  const block = found.blocks?.[blockIndex];
  if (!isRecord(block)) return undefined;
  const element = elementIndex === 'accessory' ? block.accessory : block.elements?.[Number(elementIndex)];
  if (!isRecord(element)) return undefined;
  return { ...found, block, blockIndex, element, elementIndex: elementIndex === 'accessory' ? 0 : Number(elementIndex), elementNode };
}

function containerOf(node, snapshot, fallbackChannel) {
  switch (node.getAttribute('data-container')) {
    case 'message': {
      const ts = node.getAttribute('data-ts');
      const message = snapshot.messages.find((candidate) => candidate.ts === ts);
      if (!message) return undefined;
      const container = { type: 'message', messageTs: message.ts, ...(message.threadTs !== undefined ? { threadTs: message.threadTs } : {}) };
      return { container, channel: message.channel, blocks: message.blocks };
    }
    case 'ephemeral': {
      const id = node.getAttribute('data-ephemeral-id');
      const ephemeral = snapshot.ephemerals.find((candidate) => candidate.id === id);
      return ephemeral && { container: { type: 'ephemeral', id }, channel: ephemeral.channel, blocks: ephemeral.blocks };
    }
    case 'view': {
      const viewId = node.getAttribute('data-view-id');
      const view = snapshot.views.find((candidate) => candidate.viewId === viewId);
      return view && { container: { type: 'view', viewId }, channel: fallbackChannel, blocks: view.view.blocks };
    }
    default:
      return undefined;
  }
}

export function actionRequest(target, user, selected) {
  return {
    user,
    channel: target.channel,
    container: target.container,
    blockId: blockIdOf(target.block, target.blockIndex),
    actionId: actionIdOf(target.element, target.elementIndex),
    element: target.element,
    ...(selected !== undefined ? { selected } : {}),
  };
}
