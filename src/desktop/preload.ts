// The preload of the Factory window (sandboxed, context-isolated): exposes `window.factory` and
// nothing else. All logic lives in preload-api.ts.
import { contextBridge, ipcRenderer } from 'electron';
import { createPreloadApi } from './preload-api';

contextBridge.exposeInMainWorld('factory', createPreloadApi(ipcRenderer, process.platform === 'darwin' ? 'darwin' : 'linux'));
